class A
{
    void Run()
    {
        Old();
    }
}
