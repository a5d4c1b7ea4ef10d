class A
{
    void Run()
    {
        New();
        More();
    }
}
