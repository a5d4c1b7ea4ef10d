print('n')
